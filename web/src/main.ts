// Entry point of the web client.
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { html, render } from 'htm/preact';
import { App } from './app';

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
